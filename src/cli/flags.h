#pragma once

// AddFlag(): the one way a strata command registers a flag, so every flag
// has its STRATA_* environment variable and every variable is known to
// CheckStrataEnvironment() (environment.h).

#include <cctype>
#include <set>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/environment.h"

namespace strata::cli {

// Adds `--name` to `app` with the variable STRATA_<NAME> (dashes become
// underscores) and records the variable in `env_names`.
template <typename T>
CLI::Option* AddFlag(CLI::App* app, std::set<std::string>* env_names, const std::string& name,
                     T* value, const std::string& help) {
  std::string env = std::string(kEnvPrefix);
  for (char c : name) {
    env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  env_names->insert(env);
  return app->add_option("--" + name, *value, help)->envname(env)->capture_default_str();
}

}  // namespace strata::cli
