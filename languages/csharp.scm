; C#: classes, records, structs, interfaces, enums, their methods and constructors, bases, namespaces
; (with a body) as scopes, calls and object creation, using directives. Capture names: languages/README.md.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(destructor_declaration name: (identifier) @name) @definition.method
(operator_declaration operator: _ @name) @definition.method

(class_declaration (base_list [(identifier) (qualified_name) (generic_name . (identifier) @base)] @base)) @definition.class
(record_declaration (base_list [(identifier) (qualified_name) (generic_name . (identifier) @base)] @base)) @definition.class
(struct_declaration (base_list [(identifier) (qualified_name) (generic_name . (identifier) @base)] @base)) @definition.struct
(interface_declaration (base_list [(identifier) (qualified_name) (generic_name . (identifier) @base)] @base)) @definition.interface

(namespace_declaration name: (_) @name body: (declaration_list)) @scope

(invocation_expression function: [(identifier) (member_access_expression) (qualified_name)] @call)
(object_creation_expression type: [(identifier) (qualified_name)] @call)

(using_directive name: (identifier)? @import.alias [(identifier) (qualified_name)] @import .)
