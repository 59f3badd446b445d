#include "dpem/models/gmm.h"
