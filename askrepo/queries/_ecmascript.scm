; Shared by javascript.scm and typescript.scm (node names common to both grammars); not a
; language of its own (see askrepo/chunker.py for the capture names).

(lexical_declaration (variable_declarator name: (identifier) @name value: (class))) @definition.class

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
; Class methods become "method" chunks by nesting; object-literal methods stay functions.
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.function

; Functions bound to a name: const foo = () => {}, var foo = function () {}
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
; exports.foo = function () {}, Foo.prototype.bar = () => {}, foo = function () {}
(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(expression_statement
  (assignment_expression
    left: (identifier) @name
    right: [(arrow_function) (function_expression) (generator_function)])) @definition.function
; res.send = function send () {}, Foo.prototype.bar = () => {}: qualified by the object they
; are set on (res.send, Foo.bar); exports.foo and module.exports.foo stay foo (the pattern above)
(expression_statement
  (assignment_expression
    left: (member_expression object: (identifier) @receiver property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])
  (#not-match? @receiver "^(exports|module)$")) @definition.function
(expression_statement
  (assignment_expression
    left: (member_expression
      object: (member_expression object: (identifier) @receiver property: (property_identifier) @_proto)
      property: (property_identifier) @name)
    right: [(arrow_function) (function_expression) (generator_function)])
  (#eq? @_proto "prototype")) @definition.function
; const objectTraps = { get() {}, set: () => {} }: an object of functions qualifies them
; (objectTraps.get); an object with no function in it is no definition
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: (object [(method_definition)
                    (pair value: [(arrow_function) (function_expression) (generator_function)])]))) @definition.namespace
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: (object [(method_definition)
                    (pair value: [(arrow_function) (function_expression) (generator_function)])]))) @definition.namespace
; { foo: () => {}, 'bar': function () {} }
(pair
  key: [(property_identifier) (string (string_fragment))] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; export default function () {}, export default () => {}, export default ok && function () {},
; export default class extends Base {}: named after the file (chunker.default_export_name)
(export_statement
  value: [(function_expression !name)
          (arrow_function)
          (binary_expression right: [(function_expression) (arrow_function)])]) @definition.function @default
(export_statement value: (class !name)) @definition.class @default

(export_statement) @wrapper

(comment) @doc
(decorator) @doc

(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
(new_expression constructor: (member_expression property: (property_identifier) @call))
