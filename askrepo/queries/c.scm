; askrepo chunking query for C (see askrepo/chunker.py for the capture names).

(function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator declarator: (identifier) @name)))) @definition.function

; int (lua_gettop) (lua_State *L) { ... }: a parenthesised name (it escapes a function-like macro)
(function_definition
  declarator: (function_declarator
    declarator: (parenthesized_declarator (identifier) @name))) @definition.function

(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.class
; typedef struct { ... } name_t; (an anonymous struct / union / enum is known by its typedef)
(type_definition
  type: [(struct_specifier !name body: (field_declaration_list))
         (union_specifier !name body: (field_declaration_list))
         (enum_specifier !name body: (enumerator_list))]
  declarator: (type_identifier) @name) @definition.class

(comment) @doc

(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
