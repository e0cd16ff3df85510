#include "cli/app.h"

int main(int argc, char** argv, char** envp) { return strata::cli::Main(argc, argv, envp); }
