; askrepo chunking query for Swift (see askrepo/chunker.py for the capture names).
; class/struct/enum/actor share class_declaration; an extension names its type as a user_type.

(class_declaration name: (type_identifier) @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.class
; extension Foo: Bar { func x() } -> Foo.x (method), like a Rust impl block.
(class_declaration name: (user_type (type_identifier) @name)) @definition.impl

(function_declaration name: (simple_identifier) @name) @definition.function
; operator functions (`static func == (lhs:rhs:)`, `prefix func -`): the name is the operator
; token; the grammar also tags the return type as a name, which starts with a letter
(function_declaration name: _ @name (#match? @name "^[^A-Za-z_`]")) @definition.function
(init_declaration "init" @name) @definition.function
(deinit_declaration "deinit" @name) @definition.function
(subscript_declaration "subscript" @name) @definition.function

(comment) @doc
(multiline_comment) @doc

(call_expression (simple_identifier) @call)
(call_expression (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @call)))
