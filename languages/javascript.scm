; JavaScript (and JSX): functions (declared, named expressions, assigned to a variable, a property or a
; prototype), classes and their methods (and fields holding functions), bases, calls, imports and require(). Capture names:
; languages/README.md. When several patterns name one node, the first one in this file names it.

; X.prototype.m = function () {}: a method of X
(assignment_expression
  left: (member_expression
    object: (member_expression object: (identifier) @receiver property: (property_identifier) @_proto)
    property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)] @definition.method
  (#eq? @_proto "prototype"))

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_expression name: (identifier) @name) @definition.function
(variable_declarator name: (identifier) @name value: [(function_expression) (arrow_function)] @definition.function)
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)] @definition.function)
(pair key: (property_identifier) @name value: [(function_expression) (arrow_function)] @definition.function)
; the functions of an object literal bound to a name are its members (`defaults.transformRequest`), not the module's
(variable_declarator name: (identifier) @name value: (object)) @scope

(class_declaration name: (identifier) @name) @definition.class
(class name: (identifier) @name) @definition.class
(class_declaration (class_heritage [(identifier) (member_expression)] @base)) @definition.class
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method
; a class field holding a function (handleClick = () => { ... }, a React class component's handlers): a method
(field_definition property: [(property_identifier) (private_property_identifier)] @name value: [(arrow_function) (function_expression)]) @definition.method

(call_expression function: [(identifier) (member_expression)] @call)
(new_expression constructor: [(identifier) (member_expression)] @call)

(import_statement (import_clause (identifier) @import.alias) source: (string) @import)
(import_statement (import_clause (namespace_import (identifier) @import.alias)) source: (string) @import)
(import_statement
  (import_clause (named_imports (import_specifier name: (identifier) @import.name alias: (identifier)? @import.alias)))
  source: (string) @import)
(import_statement source: (string) @import)
(export_statement source: (string) @import)
(variable_declarator
  name: (identifier) @import.alias
  value: (call_expression function: (identifier) @_require arguments: (arguments . (string) @import .))
  (#eq? @_require "require"))
(expression_statement
  (call_expression function: (identifier) @_require arguments: (arguments . (string) @import .))
  (#eq? @_require "require"))
