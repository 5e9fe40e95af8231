# Picky warnings, errors in every build (after curl's PickyWarnings.cmake).
function(mcptop_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
    -Wshadow -Wpointer-arith -Wformat=2 -Wno-format-nonliteral -Wundef -Wvla
    $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes -Wmissing-prototypes>)
endfunction()
