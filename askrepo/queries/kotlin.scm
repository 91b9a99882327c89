; askrepo chunking query for Kotlin (see askrepo/chunker.py for the capture names).
; This grammar has no field names, so children are matched by type.

(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.class
; companion object { ... }: its functions are qualified by the enclosing class only.
(companion_object) @definition.namespace

; Only functions with a body: interface declarations stay in their type's header chunk.
(function_declaration (simple_identifier) @name (function_body)) @definition.function
; fun <T> Column<T>.eq(…) = …: a top-level extension function is qualified by its receiver type
; (Column.eq); one declared inside a class stays that class's method
(source_file
  (function_declaration
    receiver: (receiver_type (user_type) @receiver)
    (simple_identifier) @name
    (function_body)) @definition.method)

; typealias Handler = (View) -> Unit: a type name given a value, like Go's type alias
(type_alias (type_identifier) @name) @definition.class

(line_comment) @doc
(multiline_comment) @doc
; After an expression-bodied function (fun f() = …) the grammar reads a top-level
; @Suppress("X") line as an annotated expression, apart from the function below it
(source_file (prefix_expression . (annotation)) @doc)

(call_expression (simple_identifier) @call)
(call_expression (navigation_expression (navigation_suffix (simple_identifier) @call)))
