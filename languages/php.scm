; PHP: classes, interfaces, traits, enums, methods, functions, bases (extends, implements, used traits),
; namespaces (with a body) as scopes, calls, use and require/include. Capture names: languages/README.md.

(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(method_declaration name: (name) @name) @definition.method
(function_definition name: (name) @name) @definition.function

(class_declaration (base_clause [(name) (qualified_name)] @base)) @definition.class
(class_declaration (class_interface_clause [(name) (qualified_name)] @base)) @definition.class
(class_declaration body: (declaration_list (use_declaration [(name) (qualified_name)] @base))) @definition.class
(interface_declaration (base_clause [(name) (qualified_name)] @base)) @definition.interface

(namespace_definition name: (_) @name body: (compound_statement)) @scope

(function_call_expression function: [(name) (qualified_name)] @call)
(member_call_expression object: (_) @call.object name: (name) @call)
(scoped_call_expression scope: (_) @call.object name: (name) @call)
(object_creation_expression [(name) (qualified_name)] @call)

(namespace_use_clause . [(name) (qualified_name)] @import alias: (name)? @import.alias)
([(require_expression) (require_once_expression) (include_expression) (include_once_expression)] (string (string_content) @import))
