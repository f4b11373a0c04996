; Java: classes, records, interfaces, enums, annotation types, their methods and constructors, bases
; (extends, implements), method calls and object creation, imports. Capture names: languages/README.md.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method

(class_declaration superclass: (superclass [(type_identifier) (scoped_type_identifier) (generic_type . (_) @base)] @base)) @definition.class
(class_declaration interfaces: (super_interfaces (type_list [(type_identifier) (scoped_type_identifier) (generic_type . (_) @base)] @base))) @definition.class
(record_declaration interfaces: (super_interfaces (type_list [(type_identifier) (scoped_type_identifier)] @base))) @definition.class
(enum_declaration interfaces: (super_interfaces (type_list [(type_identifier) (scoped_type_identifier)] @base))) @definition.enum
(interface_declaration (extends_interfaces (type_list [(type_identifier) (scoped_type_identifier) (generic_type . (_) @base)] @base))) @definition.interface

(method_invocation object: (_)? @call.object name: (identifier) @call)
(object_creation_expression type: [(type_identifier) (scoped_type_identifier)] @call)

(import_declaration [(identifier) (scoped_identifier)] @import)
