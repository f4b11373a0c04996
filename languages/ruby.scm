; Ruby: classes and modules (a module is a class-like container of methods), methods (and singleton
; methods, def self.x), superclasses and included modules as bases, calls with a receiver or
; arguments, require and require_relative. Capture names: languages/README.md.

(class name: [(constant) (scope_resolution)] @name) @definition.class
(module name: [(constant) (scope_resolution)] @name) @definition.class
(class superclass: (superclass [(constant) (scope_resolution)] @base)) @definition.class
(class body: (body_statement (call method: (identifier) @_include arguments: (argument_list [(constant) (scope_resolution)] @base)))
  (#match? @_include "^(include|extend|prepend)$")) @definition.class
(module body: (body_statement (call method: (identifier) @_include arguments: (argument_list [(constant) (scope_resolution)] @base)))
  (#match? @_include "^(include|extend|prepend)$")) @definition.class
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method

(call receiver: (_)? @call.object method: (identifier) @call)

(call method: (identifier) @_require arguments: (argument_list . (string (string_content) @import))
  (#match? @_require "^require(_relative)?$"))
