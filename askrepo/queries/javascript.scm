; inherits: _ecmascript
; askrepo chunking query for JavaScript (see askrepo/chunker.py for the capture names); the
; patterns shared with TypeScript are in _ecmascript.scm.

(class_declaration name: (identifier) @name) @definition.class

; class A { handle = () => {} }
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
