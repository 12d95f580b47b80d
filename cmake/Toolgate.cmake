# toolgate_add_test(NAME name SOURCES a.cc ... LIBS lib ... [LABELS l ...] [WHOLE])
# One place registers every GoogleTest binary, so flags and discovery stay uniform. Unit tests
# are registered case by case; WHOLE registers the binary as one test, for integration suites
# that start a whole system once and share it between their cases. With TOOLGATE_TESTS off, the
# binary is declared but not built.
function(toolgate_add_test)
  cmake_parse_arguments(T "WHOLE" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT TOOLGATE_TESTS)
    # Declared, so that what the CMakeLists say of the test still holds, but built only on
    # request (which fails without GoogleTest) and not registered with ctest.
    add_executable(${T_NAME} EXCLUDE_FROM_ALL ${T_SOURCES})
    target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} Threads::Threads)
    return()
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main Threads::Threads)
  if(T_LABELS)
    set(_labels ${T_LABELS})
  else()
    set(_labels unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  if(T_WHOLE)
    # One ctest entry runs many cases: --gtest_brief=1 prints only the failing ones (and the
    # summary naming them), so ctest --output-on-failure shows which failed and why.
    add_test(NAME ${T_NAME} COMMAND ${T_NAME} --gtest_color=no --gtest_brief=1)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${_labels}" TIMEOUT ${T_TIMEOUT})
  else()
    gtest_discover_tests(${T_NAME} PROPERTIES LABELS "${_labels}" TIMEOUT ${T_TIMEOUT}
      DISCOVERY_TIMEOUT 30)
  endif()
endfunction()

# toolgate_add_library(name SOURCES ... DEPS ...): a library with its public headers under include/.
function(toolgate_add_library NAME)
  cmake_parse_arguments(L "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${NAME} STATIC ${L_SOURCES})
  target_include_directories(${NAME} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(${NAME} PUBLIC ${L_DEPS})
endfunction()

# toolgate_embed_sql(TARGET target DIR dir FUNCTION name): compiles every dir/*.sql, in name
# order, into `std::vector<std::string_view> name()` (header "<name>.h"), so a service binary
# carries its own migrations.
function(toolgate_embed_sql)
  cmake_parse_arguments(E "" "TARGET;DIR;FUNCTION" "" ${ARGN})
  file(GLOB _files CONFIGURE_DEPENDS ${E_DIR}/*.sql)
  list(SORT _files)
  set(_body "")
  # pg::Migrate records how many steps a database has applied, so a step's position is its
  # version: the n-th file must be numbered n (001_, 002_, ...), or a database migrated before a
  # gap was filled would skip the step that fills it.
  set(_position 0)
  foreach(_f ${_files})
    math(EXPR _position "${_position} + 1")
    get_filename_component(_name ${_f} NAME)
    string(LENGTH "00${_position}" _digits)
    math(EXPR _start "${_digits} - 3")
    string(SUBSTRING "00${_position}" ${_start} 3 _expected)
    if(NOT _name MATCHES "^${_expected}_")
      message(FATAL_ERROR "${E_DIR}: migration ${_name} is step ${_position}; migrations are "
                          "numbered 001, 002, ... in order, without gaps")
    endif()
    file(READ ${_f} _sql)
    string(APPEND _body "      R\"toolgate_sql(${_sql})toolgate_sql\",\n")
  endforeach()
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/generated/${E_FUNCTION})
  file(WRITE ${_out}.h.tmp "#pragma once\n#include <string_view>\n#include <vector>\n"
    "inline const std::vector<std::string_view>& ${E_FUNCTION}() {\n"
    "  static const std::vector<std::string_view> kSteps = {\n${_body}  };\n  return kSteps;\n}\n")
  configure_file(${_out}.h.tmp ${_out}.h COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_files})
  target_include_directories(${E_TARGET} PUBLIC ${CMAKE_CURRENT_BINARY_DIR}/generated)
endfunction()

# toolgate_embed_text(TARGET target FILE file FUNCTION name): the file's text as
# `std::string_view name()` (header "<name>.h"), for documents a binary serves.
function(toolgate_embed_text)
  cmake_parse_arguments(E "" "TARGET;FILE;FUNCTION" "" ${ARGN})
  file(READ ${E_FILE} _text)
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/generated/${E_FUNCTION})
  file(WRITE ${_out}.h.tmp "#pragma once\n#include <string_view>\n"
    "inline std::string_view ${E_FUNCTION}() {\n  return R\"toolgate_text(${_text})toolgate_text\";\n}\n")
  configure_file(${_out}.h.tmp ${_out}.h COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${E_FILE})
  target_include_directories(${E_TARGET} PUBLIC ${CMAKE_CURRENT_BINARY_DIR}/generated)
endfunction()

# toolgate_embed_tree(TARGET target DIR dir FUNCTION name): every file below dir, as
# `const std::vector<EmbeddedFile>& name()` (header "<name>.h"), each with its path relative to
# dir and its text, sorted by path: data a binary carries (the demo catalogue's tools).
function(toolgate_embed_tree)
  cmake_parse_arguments(E "" "TARGET;DIR;FUNCTION" "" ${ARGN})
  file(GLOB_RECURSE _files CONFIGURE_DEPENDS ${E_DIR}/*)
  list(SORT _files)
  set(_body "")
  foreach(_f ${_files})
    file(RELATIVE_PATH _rel ${E_DIR} ${_f})
    file(READ ${_f} _text)
    string(APPEND _body "      {\"${_rel}\", R\"toolgate_text(${_text})toolgate_text\"},\n")
  endforeach()
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/generated/${E_FUNCTION})
  file(WRITE ${_out}.h.tmp "#pragma once\n#include <string_view>\n#include <vector>\n"
    "#ifndef TOOLGATE_EMBEDDED_FILE\n#define TOOLGATE_EMBEDDED_FILE\n"
    "struct EmbeddedFile {\n  std::string_view path;\n  std::string_view text;\n};\n#endif\n"
    "inline const std::vector<EmbeddedFile>& ${E_FUNCTION}() {\n"
    "  static const std::vector<EmbeddedFile> kFiles = {\n${_body}  };\n  return kFiles;\n}\n")
  configure_file(${_out}.h.tmp ${_out}.h COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_files})
  target_include_directories(${E_TARGET} PUBLIC ${CMAKE_CURRENT_BINARY_DIR}/generated)
endfunction()

# toolgate_use_service_allocator(target): the services allocate through jemalloc rather than
# glibc's malloc. Under load glibc spent up to a fifth of a service's CPU consolidating its fast
# bins (malloc_consolidate, _int_free) as small frees met larger requests on many threads;
# jemalloc's per-thread caches and size classes have no such step (docs/dependencies.md,
# docs/decisions.md, "Fewer wake-ups on the invoke path"). Linked even where nothing in the binary names it, since the point is to
# interpose malloc for every library in the process.
function(toolgate_use_service_allocator TARGET)
  target_link_libraries(${TARGET} PRIVATE "-Wl,--push-state,--no-as-needed"
    PkgConfig::JEMALLOC "-Wl,--pop-state")
endfunction()
