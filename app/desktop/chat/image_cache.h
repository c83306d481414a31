// SPDX-License-Identifier: MIT
// Decoded, scaled images of attachments, shared between the GUI thread (which adds them) and Qt Quick's image
// loading (which reads them through ImageCacheProvider as image://ember/<attachment id>). Images are decoded and
// scaled on worker threads before they arrive here, never on the GUI thread.
#pragma once

#include <QCache>
#include <QImage>
#include <QMutex>
#include <QQuickImageProvider>

namespace ember::desktop {

class ImageCache {
public:
    explicit ImageCache(qint64 maxBytes = 256ll << 20);
    void insert(const QString& id, const QImage& image);
    QImage image(const QString& id) const;
    bool contains(const QString& id) const;

private:
    mutable QMutex m_mutex;
    QCache<QString, QImage> m_images;  // cost: bytes
};

// Serves image://ember/<id> from an ImageCache (thread-safe: Qt Quick may ask from its loader threads).
class ImageCacheProvider : public QQuickImageProvider {
public:
    explicit ImageCacheProvider(const ImageCache* cache);
    QImage requestImage(const QString& id, QSize* size, const QSize& requestedSize) override;

private:
    const ImageCache* m_cache;
};

// A file or clipboard image made ready to attach: the bytes to store, and a thumbnail. Runs on a worker thread.
struct PreparedImage {
    QString name;
    QString mimeType;
    QByteArray data;
    QImage thumbnail;
    QString error;  // why the file was not taken
};
inline constexpr qint64 kMaxImageBytes = 32ll << 20;
PreparedImage prepareImageFile(const QString& path);
PreparedImage prepareImage(const QImage& image, const QString& name);

}  // namespace ember::desktop
