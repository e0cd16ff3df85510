#pragma once

// Test helper: a throwaway RADOS gateway (an S3 server) for one e2e test,
// and the serve flags that point strata at it. Single owner.

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "e2e/server_process.h"

namespace strata::testing {

// A RADOS gateway for one test: started by scripts/radosgw.sh, stopped
// after; its S3_TEST_* settings read from the env file it writes.
class RadosGateway {
 public:
  explicit RadosGateway(const std::string& dir) : dir_(dir) {
    const std::string script = std::string(STRATA_E2E_DIR) + "/../../scripts/radosgw.sh";
    Subprocess start({"/bin/bash", script, "start", dir_}, ChildEnvironment());
    started_ = start.Wait(std::chrono::seconds(90)) == 0;
    output_ = start.output();
    std::ifstream env(dir_ + "/env");
    std::string line;
    while (std::getline(env, line)) {
      if (line.starts_with("export ")) line = line.substr(7);
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string value = line.substr(eq + 1);
      if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"')) {
        value = value.substr(1, value.size() - 2);
      }
      values_[line.substr(0, eq)] = value;
    }
  }
  ~RadosGateway() {
    const std::string script = std::string(STRATA_E2E_DIR) + "/../../scripts/radosgw.sh";
    Subprocess stop({"/bin/bash", script, "stop", dir_}, ChildEnvironment());
    stop.Wait(std::chrono::seconds(60));
  }
  bool started() const { return started_ && values_.contains("S3_TEST_ENDPOINT"); }
  const std::string& output() const { return output_; }
  std::string operator[](const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? "" : it->second;
  }

 private:
  std::string dir_;
  bool started_ = false;
  std::string output_;
  std::map<std::string, std::string> values_;
};

// The flags that make strata use `gateway`'s bucket under `prefix`:
// --object-store and the S3 settings.
inline std::vector<std::string> RadosGatewayFlags(const RadosGateway& gateway,
                                                  const std::string& prefix) {
  return {"--object-store",
          "s3://" + gateway["S3_TEST_BUCKET"] + "/" + prefix,
          "--s3-endpoint",
          gateway["S3_TEST_ENDPOINT"],
          "--s3-region",
          gateway["S3_TEST_REGION"],
          "--s3-access-key-id",
          gateway["S3_TEST_ACCESS_KEY_ID"],
          "--s3-secret-access-key",
          gateway["S3_TEST_SECRET_ACCESS_KEY"]};
}

}  // namespace strata::testing
