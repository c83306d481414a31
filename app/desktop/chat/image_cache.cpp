// SPDX-License-Identifier: MIT
#include "image_cache.h"

#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QImageReader>
#include <QMimeDatabase>
#include <QMutexLocker>

#include "storage/storage_worker.h"

namespace ember::desktop {

ImageCache::ImageCache(qint64 maxBytes) : m_images(maxBytes) {}

void ImageCache::insert(const QString& id, const QImage& image) {
    if (image.isNull()) return;
    QMutexLocker lock(&m_mutex);
    m_images.insert(id, new QImage(image), std::max<qint64>(1, image.sizeInBytes()));
}

QImage ImageCache::image(const QString& id) const {
    QMutexLocker lock(&m_mutex);
    const QImage* image = m_images.object(id);
    return image ? *image : QImage();
}

bool ImageCache::contains(const QString& id) const {
    QMutexLocker lock(&m_mutex);
    return m_images.contains(id);
}

ImageCacheProvider::ImageCacheProvider(const ImageCache* cache)
    : QQuickImageProvider(QQuickImageProvider::Image), m_cache(cache) {}

QImage ImageCacheProvider::requestImage(const QString& id, QSize* size, const QSize& requestedSize) {
    QImage image = m_cache->image(id);
    if (!image.isNull() && requestedSize.isValid() &&
        (image.width() > requestedSize.width() || image.height() > requestedSize.height()))
        image = image.scaled(requestedSize, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    if (size) *size = image.size();
    return image;
}

namespace {

QImage thumbnailOf(const QImage& image) {
    if (image.width() <= kThumbnailSize && image.height() <= kThumbnailSize) return image;
    return image.scaled(kThumbnailSize, kThumbnailSize, Qt::KeepAspectRatio, Qt::SmoothTransformation);
}

}  // namespace

PreparedImage prepareImageFile(const QString& path) {
    PreparedImage out;
    const QFileInfo info(path);
    out.name = info.fileName();
    if (!info.isFile()) {
        out.error = path + QStringLiteral(": no such file");
        return out;
    }
    if (info.size() > kMaxImageBytes) {
        out.error = QStringLiteral("%1: %2 MiB is more than the %3 MiB an attached image may have")
                        .arg(out.name)
                        .arg(info.size() >> 20)
                        .arg(kMaxImageBytes >> 20);
        return out;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        out.error = path + QStringLiteral(": cannot read: ") + file.errorString();
        return out;
    }
    out.data = file.readAll();
    QBuffer buffer(&out.data);
    QImageReader reader(&buffer);
    reader.setAutoTransform(true);
    const QImage image = reader.read();
    if (image.isNull()) {
        out.error = out.name + QStringLiteral(": not an image Ember can read (") + reader.errorString() +
                    QStringLiteral(")");
        out.data.clear();
        return out;
    }
    out.mimeType = QMimeDatabase().mimeTypeForData(out.data).name();
    out.thumbnail = thumbnailOf(image);
    return out;
}

PreparedImage prepareImage(const QImage& image, const QString& name) {
    PreparedImage out;
    out.name = name;
    if (image.isNull()) {
        out.error = QStringLiteral("the clipboard holds no image");
        return out;
    }
    QBuffer buffer(&out.data);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    out.mimeType = QStringLiteral("image/png");
    out.thumbnail = thumbnailOf(image);
    return out;
}

}  // namespace ember::desktop
