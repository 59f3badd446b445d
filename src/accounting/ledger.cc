#include "dpem/accounting/ledger.h"
