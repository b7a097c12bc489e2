# layerlab_embed_files(TARGET FUNCTION NAME FILES f...) compiles the files into TARGET and
# defines `const std::vector<layerlab::embedded::File>& layerlab::embedded::NAME()` listing
# them (see src/embedded.h), so an installed binary needs no source tree. Each file's name
# is its path relative to the source dir. The bytes go in with the assembler's .incbin: no
# C array to generate or parse, so multi-megabyte assets (Plotly) cost nothing to build.
function(layerlab_embed_files target)
  cmake_parse_arguments(E "" "FUNCTION" "FILES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_${E_FUNCTION}.cc")
  set(script "${PROJECT_SOURCE_DIR}/cmake/embed_generate.cmake")
  set(abs_files "")
  foreach(f IN LISTS E_FILES)
    if(NOT EXISTS "${PROJECT_SOURCE_DIR}/${f}")
      message(FATAL_ERROR "layerlab_embed_files: ${f} does not exist")
    endif()
    list(APPEND abs_files "${PROJECT_SOURCE_DIR}/${f}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DROOT=${PROJECT_SOURCE_DIR} -DFUNCTION=${E_FUNCTION}
            "-DFILES=${E_FILES}" -P ${script}
    DEPENDS ${script}
    COMMENT "Embedding ${target} files (${E_FUNCTION})"
    VERBATIM)
  # The generated file names the files; the object must be rebuilt when their bytes change.
  set_source_files_properties("${out}" PROPERTIES OBJECT_DEPENDS "${abs_files}")
  target_sources(${target} PRIVATE "${out}")
endfunction()
