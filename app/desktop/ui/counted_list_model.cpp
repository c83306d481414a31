// SPDX-License-Identifier: MIT
// CountedListModel's members that are not templates.
#include "counted_list_model.h"

namespace ember::desktop {

int CountedListModel::count() const { return rowCount(); }

}  // namespace ember::desktop
