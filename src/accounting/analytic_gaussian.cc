#include "dpem/accounting/analytic_gaussian.h"
