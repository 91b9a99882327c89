; askrepo chunking query for Java (see askrepo/chunker.py for the capture names).

(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.class

(method_declaration name: (identifier) @name body: (block)) @definition.function
; an interface's methods, and an abstract class's abstract ones, are definitions of their own
; with their docs (TypeAdapterFactory.create)
(interface_body (method_declaration name: (identifier) @name) @definition.function)
(class_body (method_declaration (modifiers "abstract") name: (identifier) @name) @definition.function)
(constructor_declaration name: (identifier) @name) @definition.function
(compact_constructor_declaration name: (identifier) @name) @definition.function
; static final TypeAdapter<Boolean> BOOLEAN = new TypeAdapter<Boolean>() { read() … }: the methods
; of an anonymous class are qualified by the field it initialises (TypeAdapters.BOOLEAN.read)
(field_declaration
  (variable_declarator
    name: (identifier) @name
    value: (object_creation_expression (class_body)))) @definition.namespace

(line_comment) @doc
(block_comment) @doc

(method_invocation name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)
(object_creation_expression type: (generic_type (type_identifier) @call))
