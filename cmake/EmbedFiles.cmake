# layerlab_embed_files(TARGET NAMESPACE FILES...) compiles the given files into TARGET as
# byte arrays, reachable through layerlab::embedded::find(name) (see src/embedded.h), so an
# installed binary needs no source tree. Names are the files' paths relative to the source dir.
function(layerlab_embed_files target)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cc")
  set(script "${PROJECT_SOURCE_DIR}/cmake/embed_generate.cmake")
  set(abs_files "")
  foreach(f IN LISTS ARGN)
    list(APPEND abs_files "${PROJECT_SOURCE_DIR}/${f}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DROOT=${PROJECT_SOURCE_DIR} "-DFILES=${ARGN}" -P ${script}
    DEPENDS ${abs_files} ${script}
    COMMENT "Embedding ${target} files"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
