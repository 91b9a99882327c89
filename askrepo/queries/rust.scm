; askrepo chunking query for Rust (see askrepo/chunker.py for the capture names).

(function_item name: (identifier) @name) @definition.function
(macro_definition name: (identifier) @name) @definition.function

(struct_item name: (type_identifier) @name) @definition.class
(enum_item name: (type_identifier) @name) @definition.class
(union_item name: (type_identifier) @name) @definition.class
(trait_item name: (type_identifier) @name) @definition.class

; impl blocks only qualify their functions: impl<T> Foo<T> { fn new() } -> Foo.new (method),
; impl Deserialize for bool { fn deserialize() } -> bool.deserialize
(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
    (primitive_type) @name
    ; impl Buf for &mut T / &Bytes / &[u8] -> T.chunk, Bytes.chunk, [u8].chunk
    (reference_type type: [(type_identifier) (primitive_type) (array_type)] @name)
    (reference_type type: (generic_type type: (type_identifier) @name))
    (array_type) @name
  ]) @definition.impl

; a trait's required methods (no body) are definitions of their own, with their docs: Buf.chunk
(trait_item
  body: (declaration_list
    (function_signature_item name: (identifier) @name) @definition.function))

(mod_item name: (identifier) @name body: (declaration_list)) @definition.namespace

(line_comment) @doc
(block_comment) @doc
(attribute_item) @doc

(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(call_expression function: (scoped_identifier name: (identifier) @call))
(call_expression function: (generic_function function: (identifier) @call))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @call)))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @call)))
