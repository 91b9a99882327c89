; askrepo chunking query for PHP (see askrepo/chunker.py for the capture names).

(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.class
(trait_declaration name: (name) @name) @definition.class
(enum_declaration name: (name) @name) @definition.class

(function_definition name: (name) @name) @definition.function
; Only methods with a body: abstract/interface declarations stay in their type's header chunk.
(method_declaration name: (name) @name body: (compound_statement)) @definition.function

(namespace_definition name: (namespace_name) @name body: (compound_statement)) @definition.namespace

(comment) @doc

(function_call_expression function: (name) @call)
(function_call_expression function: (qualified_name (name) @call))
(member_call_expression name: (name) @call)
(nullsafe_member_call_expression name: (name) @call)
(scoped_call_expression name: (name) @call)
(object_creation_expression (name) @call)
(object_creation_expression (qualified_name (name) @call))
