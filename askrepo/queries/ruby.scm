; askrepo chunking query for Ruby (see askrepo/chunker.py for the capture names).

(class name: [(constant) (scope_resolution)] @name) @definition.class
(module name: [(constant) (scope_resolution)] @name) @definition.class

(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function

(comment) @doc

(call method: (identifier) @call)
