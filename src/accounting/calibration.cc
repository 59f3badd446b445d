#include "dpem/accounting/calibration.h"
