# Third-party dependencies, all from Debian packages (or headers carried to the GPU machine).

find_path(TOML11_INCLUDE_DIR toml.hpp REQUIRED)
add_library(sinter_toml11 INTERFACE)
target_include_directories(sinter_toml11 SYSTEM INTERFACE ${TOML11_INCLUDE_DIR})

find_path(NLOHMANN_JSON_INCLUDE_DIR nlohmann/json.hpp REQUIRED)
add_library(sinter_json INTERFACE)
target_include_directories(sinter_json SYSTEM INTERFACE ${NLOHMANN_JSON_INCLUDE_DIR})

add_library(sinter_spdlog INTERFACE)
if(SINTER_SPDLOG_HEADER_ONLY)
  find_path(SPDLOG_INCLUDE_DIR spdlog/spdlog.h REQUIRED)
  # Not SYSTEM: a plain -I is searched before the -isystem folders, so spdlog finds the fmt it was
  # written for rather than the newer fmt bundled in a pip PyTorch's include folder.
  target_include_directories(sinter_spdlog INTERFACE ${SPDLOG_INCLUDE_DIR})
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
