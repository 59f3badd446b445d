#include "dpem/accounting/rdp.h"
