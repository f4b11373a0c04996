; TypeScript and TSX: everything JavaScript has (the grammar extends JavaScript's: functions declared,
; named expressions, assigned to a variable, a property or a prototype; classes and their methods; bases;
; class fields holding functions; calls; imports and require()), plus interfaces, type aliases (as interfaces), enums, abstract classes,
; implements clauses and namespaces. Capture names: languages/README.md. When several patterns name one node, the first one
; in this file names it.

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

(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(class name: (type_identifier) @name) @definition.class
(class_declaration (class_heritage (extends_clause value: [(identifier) (member_expression)] @base))) @definition.class
(class_declaration (class_heritage (implements_clause [(type_identifier) (nested_type_identifier) (generic_type name: (_) @base)] @base))) @definition.class
(abstract_class_declaration (class_heritage (extends_clause value: [(identifier) (member_expression)] @base))) @definition.class
(abstract_class_declaration (class_heritage (implements_clause [(type_identifier) (nested_type_identifier)] @base))) @definition.class
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method
; a class field holding a function (handleClick = () => { ... }, a React class component's handlers): a method
(public_field_definition name: [(property_identifier) (private_property_identifier)] @name value: [(arrow_function) (function_expression)]) @definition.method

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
(abstract_method_signature name: (property_identifier) @name) @definition.method

(interface_declaration name: (type_identifier) @name body: (_) @body) @definition.interface
(interface_declaration (extends_type_clause type: [(type_identifier) (nested_type_identifier)] @base)) @definition.interface
(interface_declaration (extends_type_clause type: (generic_type name: (_) @base))) @definition.interface
(method_signature name: (property_identifier) @name) @definition.method
(enum_declaration name: (identifier) @name body: (_) @body) @definition.enum
; a named type (type Hooks = { ... }, type Id = string | number): TypeScript's other way to write an
; interface; a file of them (a library's public types) was one fragment as long as the file
(type_alias_declaration name: (type_identifier) @name) @definition.interface
(internal_module name: (identifier) @name) @scope
(function_signature name: (identifier) @name) @definition.function
