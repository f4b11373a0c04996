; Go: functions, methods (qualified by their receiver type: Context.JSON), struct and interface types,
; other named types and aliases (as classes: each has a method set),
; embedded types as bases, calls, imports. Capture names: languages/README.md.

(function_declaration name: (identifier) @name body: (block)? @body) @definition.function

(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @receiver
    (pointer_type (type_identifier) @receiver)
    (generic_type type: (type_identifier) @receiver)
    (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @definition.method

(type_spec name: (type_identifier) @name type: (struct_type (field_declaration_list) @body)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
; any other named type (type HandlersChain []HandlerFunc, type ErrorType uint64): a type with a method set
(type_spec name: (type_identifier) @name type: [(slice_type) (array_type) (map_type) (function_type) (channel_type)
  (pointer_type) (type_identifier) (qualified_type) (generic_type)]) @definition.class
; an alias (type FloatArg = ArgumentBase[float64]): a named type as well
(type_alias name: (type_identifier) @name) @definition.class

; embedded fields and embedded interfaces
(type_spec type: (struct_type (field_declaration_list (field_declaration !name type: [
  (type_identifier) @base
  (qualified_type) @base
  (pointer_type (type_identifier) @base)
  (pointer_type (qualified_type) @base)])))) @definition.struct
(type_spec type: (interface_type (type_elem [(type_identifier) (qualified_type)] @base))) @definition.interface

(call_expression function: [(identifier) (selector_expression)] @call)

(import_spec name: (package_identifier)? @import.alias path: (interpreted_string_literal) @import)
