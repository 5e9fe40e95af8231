# Picky warnings, errors in every build (after curl's PickyWarnings.cmake).
function(mcptop_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
    -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith
    -Wformat=2 -Wno-format-nonliteral -Wundef -Wvla)
endfunction()
