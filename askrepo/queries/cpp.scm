; inherits: c
; askrepo chunking query for C++ (see askrepo/chunker.py for the capture names): c.scm plus
; what only C++ has; its functions, structs, typedefs, comments and plain calls apply as they are.

(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(identifier) (field_identifier) (operator_name)] @name))) @definition.function
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) (field_identifier) (operator_name)] @name))) @definition.function

; Out-of-line members are qualified by their scope: void Foo::run() {} -> Foo.run (method)
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier scope: (_) @receiver name: (_) @name))) @definition.method
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (qualified_identifier scope: (_) @receiver name: (_) @name)))) @definition.method
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: (qualified_identifier scope: (_) @receiver name: (_) @name)))) @definition.method

(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
; template <> struct formatter<my_type, char> { ... }: a specialisation is named by its template
(class_specifier
  name: (template_type name: (type_identifier) @name)
  body: (field_declaration_list)) @definition.class
(struct_specifier
  name: (template_type name: (type_identifier) @name)
  body: (field_declaration_list)) @definition.class

; class EXPORT_API Name { ... }: an unknown export macro makes tree-sitter read the class as a
; function named Name whose return type is "class EXPORT_API".
(function_definition
  type: [(class_specifier name: (type_identifier)) (struct_specifier name: (type_identifier))]
  declarator: (identifier) @name
  body: (compound_statement)) @definition.class

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name
  body: (declaration_list)) @definition.namespace

; template <typename T> belongs to the templated definition.
(template_declaration) @wrapper

(call_expression function: (qualified_identifier name: (identifier) @call))
(call_expression function: (template_function name: (identifier) @call))
