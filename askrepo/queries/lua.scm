; askrepo chunking query for Lua (see askrepo/chunker.py for the capture names).
; Lua has no classes: a module table's functions are qualified by the table (M.split, M:new).

(function_declaration name: (identifier) @name) @definition.function
(function_declaration
  name: (dot_index_expression table: (_) @receiver field: (identifier) @name)) @definition.function
(function_declaration
  name: (method_index_expression table: (_) @receiver method: (identifier) @name)) @definition.function

; M.join = function (a, b) ... end
(assignment_statement
  (variable_list . name: (dot_index_expression table: (_) @receiver field: (identifier) @name))
  (expression_list . value: (function_definition))) @definition.function
(assignment_statement
  (variable_list . name: (identifier) @name)
  (expression_list . value: (function_definition))) @definition.function
; local wrap = function () ... end
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @name)
    (expression_list . value: (function_definition)))) @definition.function

(comment) @doc

(function_call name: (identifier) @call)
(function_call name: (dot_index_expression field: (identifier) @call))
(function_call name: (method_index_expression method: (identifier) @call))
