#include "dpem/models/gmm_model_io.h"
