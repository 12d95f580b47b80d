#include "toolgate/core/egress_flags.h"

namespace toolgate::core {

void DefineOperatorEgressFlags(Flags& flags) {
  flags.Define("no-egress", "false",
               "turn egress off: every handler's outbound request is refused");
  flags.DefineRepeated("egress-allow-cidr",
                       "a network handlers may reach although it is not public; never an address "
                       "of the host itself (repeatable)");
  flags.DefineRepeated("egress-deny-cidr",
                       "a network handlers may never reach; wins over --egress-allow-cidr "
                       "(repeatable)");
}

}  // namespace toolgate::core
