; inherits: _ecmascript
; askrepo chunking query for TypeScript (see askrepo/chunker.py for the capture names); the
; patterns shared with JavaScript are in _ecmascript.scm. tsx.scm inherits this file.

(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.class
; an interface's methods, and an abstract class's abstract ones, are definitions of their own
; with their docs (Handler.handle)
(interface_body (method_signature name: (property_identifier) @name) @definition.function)
(abstract_method_signature name: (property_identifier) @name) @definition.function
(enum_declaration name: (identifier) @name) @definition.class

(internal_module name: [(identifier) (nested_identifier)] @name) @definition.namespace

; class A { handle = (e: Event) => {} }
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
