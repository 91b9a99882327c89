; askrepo chunking query for Python (see askrepo/chunker.py for the capture names).

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

; Decorators belong to the definition they decorate.
(decorated_definition) @wrapper

(comment) @doc

(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call))
