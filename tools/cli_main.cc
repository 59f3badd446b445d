// The dpem command-line tool's commands and their dispatch, shared by `dpem`
// (dpem_main.cc) and `dpem-mpi` (dpem_mpi_main.cc). Every error a user can
// cause ends in one line on stderr naming the flag or file and exit code 2
// (under dpem-mpi, the line is rank 0's; every rank exits 2).
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"

namespace dpem::cli {

int RunCli(int argc, char** argv, CliFailure* failure) {
  CLI::App app{
      "dpem: differentially private expectation maximization.\n"
      "Neighbouring data sets differ by replacing one record; every guarantee\n"
      "printed is for that relation.",
      "dpem"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dpem 0.1.0");
  CLI::App& fit = *AddFitParent(app);
  std::vector<Command> commands = {AddFitGmmCommand(fit), AddFitFaCommand(fit),
                                   AddFitKmeansCommand(fit), AddFitGradientEmCommand(fit)};
  for (const Command& command : AddModelCommands(app)) commands.push_back(command);
  for (Command (*add)(CLI::App&) : {&AddGenerateCommand, &AddAccountCommand, &AddCalibrateCommand,
                                    &AddSampleNoiseCommand, &AddBudgetCommand, &AddBoundsCommand}) {
    commands.push_back(add(app));
  }
  if (argc > 1 && argv[1][0] != '-') {
    std::string accepted;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      accepted += (accepted.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      PrintError("", std::string("unknown command '") + argv[1] + "' (accepted: " + accepted + ")");
      return kUsageErrorExitCode;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    PrintError("", std::string(e.what()) + " (see dpem --help)");
    return kUsageErrorExitCode;
  }
  for (const Command& command : commands) {
    if (!command.app->parsed()) continue;
    const dpem::Status status = command.run();
    if (!status.ok()) {
      std::string name = command.app->get_name();
      if (command.app->get_parent() != &app) name = command.app->get_parent()->get_name() + " " + name;
      PrintError(name, status.message());
      if (failure != nullptr) *failure = {status, "dpem " + name + ": " + status.message()};
      return kUsageErrorExitCode;
    }
    return 0;
  }
  return 0;
}

}  // namespace dpem::cli
