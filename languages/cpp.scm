; C++: everything C has, plus classes, methods (in the class, or defined outside it as Type::method),
; bases, namespaces as scopes, qualified calls. Capture names: languages/README.md.

(function_definition declarator: (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @definition.function
(function_definition declarator: (reference_declarator (function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))) @definition.function
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method

(class_specifier name: [(type_identifier) (qualified_identifier)] @name body: (field_declaration_list)) @definition.class
(struct_specifier name: [(type_identifier) (qualified_identifier)] @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition type: (struct_specifier !name body: (field_declaration_list)) declarator: (type_identifier) @name) @definition.struct
(class_specifier (base_class_clause [(type_identifier) (qualified_identifier) (template_type name: (_) @base)] @base)) @definition.class
(struct_specifier (base_class_clause [(type_identifier) (qualified_identifier) (template_type name: (_) @base)] @base)) @definition.struct

(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @scope

(call_expression function: [(identifier) (field_expression) (qualified_identifier)] @call)

(preproc_include path: (string_literal) @import)
