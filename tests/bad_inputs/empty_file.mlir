// expected-error: 2:1: the input is empty; expected a module
