// expected-error: 3:3: 'autotune.group' op takes no operands, results or regions
module {
  "autotune.group"() <{sym_name = "g", variants = [@a]}> ({
  }) : () -> ()
}
