// The dpem command-line tool (tools/cli_main.cc has its commands).
#include "cli_common.h"

int main(int argc, char** argv) { return dpem::cli::RunCli(argc, argv); }
