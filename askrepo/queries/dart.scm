; askrepo chunking query for Dart (see askrepo/chunker.py for the capture names).
; A Dart function's signature and body are sibling nodes: @end extends the definition to the
; end of its body.

(class_definition name: (identifier) @name) @definition.class
(mixin_declaration (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.class
(extension_declaration name: (identifier) @name) @definition.class

(program
  (function_signature name: (identifier) @name) @definition.function
  .
  (function_body) @end)
(program
  (getter_signature name: (identifier) @name) @definition.function
  .
  (function_body) @end)
(program
  (setter_signature name: (identifier) @name) @definition.function
  .
  (function_body) @end)

; Methods, getters, setters and constructors with a body. A named constructor A.named() is
; "named" (-> A.named), an unnamed one A() is "A" (-> A.A).
(_
  (method_signature
    [
      (function_signature name: (identifier) @name)
      (getter_signature name: (identifier) @name)
      (setter_signature name: (identifier) @name)
      (constructor_signature . (identifier) @name . (formal_parameter_list))
      (constructor_signature (identifier) . (identifier) @name . (formal_parameter_list))
      (factory_constructor_signature . (identifier) @name . (formal_parameter_list))
      (factory_constructor_signature (identifier) . (identifier) @name . (formal_parameter_list))
    ]) @definition.function
  .
  (function_body) @end)

(comment) @doc
(documentation_comment) @doc
(annotation) @doc

((identifier) @call . (selector (argument_part)))
((selector (unconditional_assignable_selector (identifier) @call)) . (selector (argument_part)))
