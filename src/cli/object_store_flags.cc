#include "cli/object_store_flags.h"

#include "cli/flags.h"

namespace strata::cli {

void AddObjectStoreFlags(CLI::App* command, std::set<std::string>* env_names,
                         objectstore::ObjectStoreSettings* settings, const std::string& url_help) {
  AddFlag(command, env_names, "object-store", &settings->url, url_help);
  AddFlag(command, env_names, "s3-endpoint", &settings->endpoint,
          "S3 endpoint http(s)://host[:port] (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, "
          "else AWS's for the region)");
  AddFlag(command, env_names, "s3-region", &settings->region,
          "S3 region (default: AWS_REGION, AWS_DEFAULT_REGION, else us-east-1)");
  AddFlag(command, env_names, "s3-addressing", &settings->addressing,
          "path (bucket in the path, the default) or virtual (bucket in the host name)");
  AddFlag(command, env_names, "s3-access-key-id", &settings->access_key_id,
          "S3 access key id (default: AWS_ACCESS_KEY_ID)");
  AddFlag(command, env_names, "s3-secret-access-key", &settings->secret_access_key,
          "S3 secret key (default: AWS_SECRET_ACCESS_KEY; prefer a variable to a flag, which "
          "other users can see in the process list)");
}

}  // namespace strata::cli
