; askrepo chunking query for Go (see askrepo/chunker.py for the capture names).

(function_declaration name: (identifier) @name) @definition.function

; Methods are qualified by their receiver type: func (s *Server) Run() -> Server.Run
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name) @definition.method
(method_declaration name: (field_identifier) @name) @definition.method

(type_spec name: (type_identifier) @name type: [(struct_type) (interface_type)]) @definition.class
; an interface's methods are definitions of their own, with their docs: Router.Use
(type_spec
  type: (interface_type (method_elem name: (field_identifier) @name) @definition.function))
; every other named type is a definition too: type HandlerFunc func(*Context), type Mode uint8,
; type Params []Param, type A = B (methods hang on them like on structs)
(type_spec name: (type_identifier) @name) @definition.class
(type_alias name: (type_identifier) @name) @definition.class

(comment) @doc

(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))
