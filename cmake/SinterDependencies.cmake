# Third-party dependencies, all from Debian packages (or headers carried to the GPU machine).

find_path(TOML11_INCLUDE_DIR toml.hpp REQUIRED)
add_library(sinter_toml11 INTERFACE)
target_include_directories(sinter_toml11 SYSTEM INTERFACE ${TOML11_INCLUDE_DIR})

find_path(NLOHMANN_JSON_INCLUDE_DIR nlohmann/json.hpp REQUIRED)
add_library(sinter_json INTERFACE)
target_include_directories(sinter_json SYSTEM INTERFACE ${NLOHMANN_JSON_INCLUDE_DIR})

add_library(sinter_spdlog INTERFACE)
find_path(SPDLOG_INCLUDE_DIR spdlog/spdlog.h REQUIRED)
find_path(FMT_INCLUDE_DIR fmt/core.h REQUIRED)
# A pip PyTorch's include folder bundles a newer fmt than the spdlog here was written for. Give
# spdlog and its own fmt a folder of their own, searched first (a plain -I comes before every
# -isystem folder), so the runner builds against either libtorch.
set(SINTER_SPDLOG_FMT_DIR ${PROJECT_BINARY_DIR}/spdlog-fmt-include)
file(MAKE_DIRECTORY ${SINTER_SPDLOG_FMT_DIR})
file(CREATE_LINK ${SPDLOG_INCLUDE_DIR}/spdlog ${SINTER_SPDLOG_FMT_DIR}/spdlog SYMBOLIC)
file(CREATE_LINK ${FMT_INCLUDE_DIR}/fmt ${SINTER_SPDLOG_FMT_DIR}/fmt SYMBOLIC)
target_include_directories(sinter_spdlog INTERFACE ${SINTER_SPDLOG_FMT_DIR})
if(SINTER_SPDLOG_HEADER_ONLY)
  target_compile_definitions(sinter_spdlog INTERFACE SPDLOG_HEADER_ONLY SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY)
else()
  find_package(spdlog REQUIRED)
  target_link_libraries(sinter_spdlog INTERFACE spdlog::spdlog)
endif()

if(SINTER_BUILD_RUNNER)
  find_package(Torch REQUIRED)
  find_path(STB_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb REQUIRED)
  find_path(WEBP_INCLUDE_DIR webp/decode.h REQUIRED)
  find_library(WEBP_LIBRARY webp REQUIRED)
  add_library(sinter_webp INTERFACE)
  target_include_directories(sinter_webp SYSTEM INTERFACE ${WEBP_INCLUDE_DIR})
  target_link_libraries(sinter_webp INTERFACE ${WEBP_LIBRARY})
endif()
