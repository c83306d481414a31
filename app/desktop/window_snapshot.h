// SPDX-License-Identifier: MIT
// `ember --screenshot FILE`: the window saved as a PNG once it has settled, then the app quits. For install checks
// (the installed app drew its window with the model loaded) and for the pictures in the AppStream metainfo, on any
// platform including offscreen.
#pragma once

#include <QString>

namespace ember::desktop {

class AppShell;

// Waits for the model load to end (at once when no load is under way), saves the window to `file` and quits the
// application: exit code 0 when a model is loaded (or none was asked for), 1 when the load failed or the picture
// could not be saved. Prints one line saying which.
void snapshotWhenSettled(AppShell* shell, const QString& file);

}  // namespace ember::desktop
