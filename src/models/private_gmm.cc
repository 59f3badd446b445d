#include "dpem/models/private_gmm.h"
