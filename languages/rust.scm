; Rust: functions, structs, enums, unions, type aliases (as classes), traits (with their method signatures), impl blocks (their
; functions are methods of the type; "impl Trait for Type" makes Trait a base of Type; the block is a namespace
; entity, Type.Trait, or Type where the file does not define it), inline modules
; (`mod tests { ... }`) as namespaces (entities that qualify what they define), macro_rules! macros (as
; functions), calls (a macro's too), use declarations. Capture names: languages/README.md.

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.method
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
; a type alias of a module (pub type Dedup<I> = CoalesceBy<I, DedupPred>): a named type, as Go's are classes;
; not the associated types of impl blocks and traits (type Item = u32), which every iterator has
(source_file (type_item name: (type_identifier) @name) @definition.class)
(mod_item body: (declaration_list (type_item name: (type_identifier) @name) @definition.class))
(trait_item name: (type_identifier) @name) @definition.trait
(trait_item bounds: (trait_bounds [(type_identifier) (scoped_type_identifier)] @base)) @definition.trait

(impl_item type: (_) @name) @scope.type
(impl_item trait: [(type_identifier) (scoped_type_identifier) (generic_type type: (_) @base)] @base) @scope.type
(mod_item name: (identifier) @name body: (declaration_list)) @definition.namespace
; macro_rules! (a crate's API is often its macros: anyhow!, bail!), called as functions are
(macro_definition name: (identifier) @name) @definition.function

(call_expression function: [(identifier) (scoped_identifier) (field_expression)] @call)
(macro_invocation macro: [(identifier) (scoped_identifier)] @call)

(use_declaration argument: [(identifier) (scoped_identifier)] @import)
(use_declaration argument: (use_as_clause path: (_) @import alias: (identifier) @import.alias))
(scoped_use_list path: (_) @import list: (use_list (identifier) @import.name))
(scoped_use_list path: (_) @import list: (use_list (use_as_clause path: (identifier) @import.name alias: (identifier) @import.alias)))
