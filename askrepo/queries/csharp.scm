; askrepo chunking query for C# (see askrepo/chunker.py for the capture names).

(class_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.class

; Only members with a body: abstract/interface declarations stay in their type's header chunk.
(method_declaration name: (identifier) @name body: (_)) @definition.function
(constructor_declaration name: (identifier) @name body: (_)) @definition.function
(destructor_declaration name: (identifier) @name body: (_)) @definition.function

(namespace_declaration name: (_) @name) @definition.namespace

(comment) @doc

(invocation_expression function: (identifier) @call)
(invocation_expression function: (generic_name (identifier) @call))
(invocation_expression function: (member_access_expression name: (identifier) @call))
(invocation_expression function: (member_access_expression name: (generic_name (identifier) @call)))
(object_creation_expression type: (identifier) @call)
