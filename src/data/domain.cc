#include "dpem/data/domain.h"
