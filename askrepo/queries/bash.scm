; askrepo chunking query for Bash (see askrepo/chunker.py for the capture names).

(function_definition name: (word) @name) @definition.function

(comment) @doc

(command name: (command_name (word) @call))
