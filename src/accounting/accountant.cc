#include "dpem/accounting/accountant.h"
