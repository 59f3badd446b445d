#include "dpem/accounting/composition.h"
